#!/bin/bash
#SBATCH --job-name=pinned
#SBATCH --sky-infra=beta
#SBATCH --partition=h100-cluster
#SBATCH --nodes=2 --ntasks-per-node=4 --cpus-per-task=2
#SBATCH --gres=gpu:h100:4
#SBATCH --mem=64000M
#SBATCH --sky-retry-on-failure=2

srun hostname
