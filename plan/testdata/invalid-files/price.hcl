backend "openai" "gw" {
  url = "http://127.0.0.1:8000/v1"
  price {
    input_per_mtok  = 2
    output_per_mtok = 8
    currency        = "USD"
  }
}
backend "openai" "hourly" {
  url = "http://127.0.0.1:8001/v1"
  price {
    per_hour = 3 # ERROR: Invalid price ~ belongs in the price of a hardware block
    currency = "USD"
  }
}
backend "openai" "negative" {
  url = "http://127.0.0.1:8002/v1"
  price {
    output_per_mtok = -1 # ERROR: Invalid price ~ cannot be negative
    currency        = "USD"
  }
}
backend "openai" "yuan" {
  url = "http://127.0.0.1:8003/v1"
  price {
    output_per_mtok = 1
    currency        = "CNY" # ERROR: Mixed currencies ~ share one currency
  }
}
hardware "h200" {
  price {
    per_hour = 3.5
    currency = "USD"
  }
}
hardware "empty" {
  price { # ERROR: Invalid price ~ gives "per_hour"
    currency = "USD"
  }
}
hardware "nocurrency" {
  price { # ERROR: Missing required argument
    per_hour = 1
  }
}
hardware "badcurrency" {
  price {
    per_hour = 1
    currency = "US dollars" # ERROR: Invalid currency
  }
}
workload "w" {}
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.gw]
  hardware = [hardware.h200]
  workload = [workload.w]
}
