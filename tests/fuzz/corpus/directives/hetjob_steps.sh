#!/bin/bash
#SBATCH -J het -t 30 --mem=8G
#SBATCH -N 2 --gres=gpu:h100:4 -p gpu
#SBATCH hetjob -n 3
#SBATCH --cpus-per-task=4
#SBATCH packjob
#SBATCH -t 10 --gpus-per-node=a100:1 --mem-per-cpu=1G
srun --het-group=0 --container-image=nvcr.io#nvidia/pytorch:24.01-py3 python x.py : --het-group=1 true
  /usr/bin/srun --site-opt "a b" ./a.out & # srun --c
