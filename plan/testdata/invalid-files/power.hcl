backend "openai" "gw" {
  url = "http://127.0.0.1:8000/v1"
}
hardware "typo" {
  power {
    source = "nvlm" # ERROR: Invalid power source ~ Did you mean "nvml"?
  }
}
hardware "nocommand" {
  power { # ERROR: Missing command
    source = "command"
  }
}
hardware "emptycommand" {
  power {
    source  = "command"
    command = [] # ERROR: Invalid command
  }
}
hardware "misplaced" {
  power {
    source  = "rapl"
    command = ["echo", "1"] # ERROR: Unsupported argument ~ belongs to source = "command"
  }
}
hardware "noquery" {
  power { # ERROR: Missing url or query
    source = "prometheus"
    url    = "http://127.0.0.1:9090"
  }
}
hardware "badurl" {
  power {
    source = "prometheus"
    url    = "127.0.0.1:9400/metrics" # ERROR: Invalid url
    query  = "DCGM_FI_DEV_POWER_USAGE"
  }
}
hardware "fast" {
  power {
    source   = "rapl"
    interval = "1ms" # ERROR: Invalid interval ~ at least 10ms
  }
}
hardware "spelled" {
  power {
    source   = "rapl"
    intervall = "1s" # ERROR: Unsupported argument ~ Did you mean "interval"?
  }
}
hardware "noprice" {
  power {
    source   = "rapl"
    currency = "USD" # ERROR: Missing price_per_kwh
  }
}
hardware "nocurrency" {
  power {
    source        = "rapl"
    price_per_kwh = 0.3 # ERROR: Missing currency
  }
}
hardware "mixed" {
  price {
    per_hour = 1
    currency = "USD"
  }
  power {
    source        = "nvml"
    price_per_kwh = 0.3
    currency      = "EUR" # ERROR: Mixed currencies ~ hardware price's currency
  }
}
hardware "negative" {
  power {
    source        = "nvml"
    price_per_kwh = -1 # ERROR: Invalid price
    currency      = "USD"
  }
}
hardware "twice" {
  power {
    source = "nvml"
  }
  power { # ERROR: Duplicate power block
    source = "rapl"
  }
}
workload "w" {}
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.gw]
  hardware = [hardware.typo]
  workload = [workload.w]
}
