# Curly quotes pasted from a chat around a URL: the "//" inside is no comment, so the
# closing quote is named on the same line and nothing after it is an error.
backend "openai" "v" {
  url = ‘http://127.0.0.1:8000/v1’ # ERROR: Non-ASCII character ~ "’" (U+2019 RIGHT SINGLE QUOTATION MARK)
}
backend "openai" "w" {
  url = “http://127.0.0.1:8001/v1” # ERROR: Non-ASCII character ~ "”" (U+201D RIGHT DOUBLE QUOTATION MARK)
}
workload "w" {
  prompt = "quotes “inside” a string are the user's own text"
}
matrix "m" {
  model    = ["m"]
  tool     = [backend.openai.v, backend.openai.w]
  workload = [workload.w]
}
