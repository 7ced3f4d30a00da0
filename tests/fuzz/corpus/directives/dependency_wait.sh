#!/bin/bash
#SBATCH --dependency=afterok:4242:4243
#SBATCH --wait
#SBATCH --hold
#SBATCH --export=PATH,CUDA_HOME,MY_SETTING=1
#SBATCH --gres=gpu:2
echo done
