#!/bin/bash
#SBATCH -J finetune-small
#SBATCH --gpus-per-node=a100:1
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --time=30

python train.py --epochs 3
