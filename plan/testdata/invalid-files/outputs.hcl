# Output blocks checked against the table of output kinds (report.Outputs).
output "csv" {
  language = "zh" # ERROR: Unsupported argument ~ language is an option of the html and markdown outputs only, not of csv.
}
output "summary" {
  percentiles = [50] # ERROR: Unsupported argument
}
output "htm" { # ERROR: Unknown output kind ~ Did you mean "html"?
}
output "html" {
  path        = "out/r.html"
  percentiles = [50, 75] # ERROR: Unknown percentile ~ percentiles lists some of 50, 90, 95 or 99 (the ones every output keeps), not 75.
}
