"""`accelwiz doctor`: a preflight of a multi-node allocation, run by one task per node before training.

Each node gathers what decides whether the nodes can train together (gather.py), the nodes exchange it through a
small rendezvous store hosted by node 0 (exchange.py), compare it with each other and with the plan (compare.py),
then run a tiny all-reduce (allreduce.py). Every node prints the same table (render.py) and ends with the same
exit code (model.Problem), so a job script can stop before training instead of hanging in the rendezvous.
"""

# Seconds a node waits for the others once it is ready (torch imported): srun starts its tasks together, so a few
# seconds of skew is the norm; a job with slow or staggered nodes passes a longer --timeout. Here, not in
# preflight.py, so that the command's --help reads it without importing the preflight.
DEFAULT_TIMEOUT = 10.0
