#!/bin/sh
# Prints its environment, one NAME=value a line. dash adds PWD (its cwd)
# itself when the environment has none.
exec env
