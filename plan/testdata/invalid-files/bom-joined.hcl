# Two plans joined with cat: the second one's byte-order mark is inside the file. It is
# named as such, once, and the second plan is read as if it were not there.
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
﻿workload "w" { # ERROR: Byte-order mark inside the file ~ two files were joined
  prompt_tokens = 16
}
matrix "m" {
  model    = ["m"]
  tool     = [backend.openai.v]
  workload = [workload.w]
}
