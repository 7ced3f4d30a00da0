#!/bin/sh
# Snakemake's --cluster-status script (its generic --cluster mode): the
# state of job $1 in sacct's words, as "success", "failed" or "running".
state=$(sacct -j "$1" -X -n -P -o State | head -n 1)
case "${state%% *}" in
  COMPLETED) echo success ;;
  FAILED | CANCELLED* | TIMEOUT | NODE_FAIL | PREEMPTED | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
    echo failed ;;
  *) echo running ;;
esac
