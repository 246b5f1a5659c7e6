"""`accelwiz doctor`: a preflight of a multi-node allocation, run by one task per node before training.

Each node gathers what decides whether the nodes can train together (gather.py), the nodes exchange it through a
small rendezvous store hosted by node 0 (exchange.py), compare it with each other and with the plan (compare.py),
then run a tiny all-reduce (allreduce.py). Every node prints the same table (render.py) and ends with the same
exit code (model.Problem), so a job script can stop before training instead of hanging in the rendezvous.
"""
