# Two slips HCL answers with errors on the lines after them, each one error here: a
# comment after a heredoc's marker (the heredoc's text is then read as arguments) and a
# single = in a comparison. The rest of the file is read as meant.
backend "openai" "v" {
  url = "http://127.0.0.1:8000/v1"
}
workload "w" {
  requests = 8
  prompt = <<-EOT # ERROR: Text after a heredoc marker ~ must end its line
    Summarise this in two sentences.
    EOT
  goal = result.error_rate = 0 # ERROR: Single = in a comparison ~ write ==
}
matrix "m" {
  model    = ["m"]
  tool     = [backend.openai.v]
  workload = [workload.w]
}
expect "e" {
  condition     = result.ttft_p99_s < 2 || result.error_rate = 0 # ERROR: Single = in a comparison
  error_message = "slow"
}
