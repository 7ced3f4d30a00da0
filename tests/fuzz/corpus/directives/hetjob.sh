#!/bin/bash
#SBATCH --job-name=server-client
#SBATCH --nodes=1 --gres=gpu:h100:4 --time=1:00:00
#SBATCH hetjob
#SBATCH --nodes=2 --partition=cpu --time=1:00:00

srun --het-group=0 ./server &
srun --het-group=1 ./client
wait
