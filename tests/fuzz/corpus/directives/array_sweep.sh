#!/bin/bash
#SBATCH -J sweep
#SBATCH -a 0-99%10
#SBATCH -N1 -n1 -c 8
#SBATCH -G a100:1
#SBATCH -t 2:00:00
#SBATCH -o sweep_%A_%a.out

ml cuda/12.1 python/3.11
python sweep.py --index "$SLURM_ARRAY_TASK_ID"
