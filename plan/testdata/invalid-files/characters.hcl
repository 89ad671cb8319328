# 注释里的全角标点（，＝）和中文没问题：comments and strings are the user's own text.
# Outside them, each line with a character that is not ASCII is one error naming it,
# its code point and what it stands for; the rest of the file is read as meant.
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
hardware "h" {
  cpus  = "0–3" # ERROR: Invalid cpus ~ "–" (U+2013 EN DASH), which looks like the ASCII "-"
  notes = "中文说明，没问题"
}
workload "w" {
  prompt_tokens = 16，# ERROR: Non-ASCII character ~ "，" (U+FF0C FULLWIDTH COMMA) where the plan language needs the ASCII ","
  max_tokens　= 4 # ERROR: Non-ASCII character ~ U+3000 IDEOGRAPHIC SPACE where the plan language needs a plain space
  concurrency ＝ [1, 2] # ERROR: Non-ASCII character ~ 全角
  temperature = “0” # ERROR: Non-ASCII character ~ "”" (U+201D RIGHT DOUBLE QUOTATION MARK) where the plan language needs a straight double quote (")
  seed = ４２ # ERROR: Non-ASCII character ~ "４" (U+FF14 FULLWIDTH DIGIT FOUR)
  requests = 8 # ERROR: Non-ASCII character ~ U+00A0 NO-BREAK SPACE
}
locals {
  模型 = "m" # ERROR: Non-ASCII character ~ "模" (U+6A21), which stands for no ASCII character
}
matrix "m" {
  model    = ["m"]
  tool     = [backend.openai.v]
  hardware = [hardware.h]
  workload = [workload.w]
}
