#!/bin/bash
#SBATCH --job-name=lammps-scaling
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=4
#SBATCH --gres=gpu:h100:8
#SBATCH --mem=200G
#SBATCH --time=12:00:00
#SBATCH --partition=gpu
#SBATCH --account=proj-a
#SBATCH --qos=normal
#SBATCH --output=logs/%x-%j.out
#SBATCH --error=logs/%x-%j.err
#SBATCH --exclusive

set -euo pipefail
module purge
module load gcc/12.2 openmpi/4.1.5
module load cuda/12.1
export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK
srun --mpi=pmix lmp -k on g 8 -sf kk -in in.lj
