#!/bin/sh
# Succeeds without reading its stdin.
echo 'ignored stdin'
exit 0
