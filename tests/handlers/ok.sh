#!/bin/sh
# Succeeds with "ok:" followed by the payload, byte for byte.
printf 'ok:'
exec cat
