# Generated from protos/ by scripts/gen_protos.py. Do not edit.
"""Generated gRPC code of protos/lorebase/v1."""
