#!/bin/sh
# Writes to stdout without end, past any max_output_bytes.
exec yes flood
