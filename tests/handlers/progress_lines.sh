#!/bin/sh
# Progress reports on EMQ_PROGRESS_FD: two lines, one of 2000 bytes (cut to
# 1024), and a last one without a newline; then completes.
echo "10%" >&3
echo '{"step":2}' >&3
head -c 2000 /dev/zero | tr '\0' x >&3
echo >&3
printf 'last, without a newline' >&3
cat > /dev/null
