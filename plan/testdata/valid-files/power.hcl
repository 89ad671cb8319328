# Power meters on hardware blocks: every row measured there gets its energy per token.
backend "openai" "vllm" {
  url = "http://127.0.0.1:8000/v1"
}
hardware "gpu" {
  power {
    source = "nvml"
  }
}
hardware "cpu" {
  price {
    per_hour = 0.5
    currency = "EUR"
  }
  power {
    source        = "rapl"
    interval      = "250ms"
    price_per_kwh = 0.32
  }
}
hardware "plug" {
  power {
    source        = "command"
    command       = ["sh", "-c", "cat /run/plug-watts"]
    interval      = "2s"
    price_per_kwh = 0.25
    currency      = "EUR"
  }
}
hardware "dcgm" {
  power {
    source = "prometheus"
    url    = "http://gpu1.lab:9400/metrics"
    query  = "DCGM_FI_DEV_POWER_USAGE"
  }
}
workload "w" {
  prompt = "hi"
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.vllm]
  hardware = [hardware.gpu, hardware.cpu, hardware.plug, hardware.dcgm]
  workload = [workload.w]
}
