# config.toml - the seed's benchmark config, given where a plan belongs
[server] # ERROR: Not a plan: a TOML config ~ planrun convert
host = "0.0.0.0"
port = 8000

[model]
name = "qwen2.5-7b-instruct"
