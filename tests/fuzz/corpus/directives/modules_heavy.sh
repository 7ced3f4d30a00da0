#!/bin/bash
#SBATCH --gpus-per-task=1
#SBATCH --ntasks=4
#SBATCH --mem-per-gpu=40G
#SBATCH --time=1-00:00:00
#SBATCH --constraint=h100&ib

module purge
module load cuda/12.1
module load cudnn/8.9-cuda12
ml nccl/2.18.3 python/3.11.5
module swap cuda/12.1 cuda/12.4
if [[ -n "${EXTRA:-}" ]]; then module load $EXTRA; fi
module list
srun python train.py
