# Data-mining flow sizes: the distribution measured in a data-mining cluster,
# Greenberg et al., "VL2: A Scalable and Flexible Data Center Network", SIGCOMM 2009 (Figure 2),
# in the tabulated form used by later studies (e.g. pFabric, SIGCOMM 2013): sizes in 1460-byte
# packets there; here in bytes. Columns: flow size (bytes), cumulative probability.
# Heavy-tailed: half the flows are one packet, the largest about 1 GB (mean about 7.4 MB).
1460 0.50
2920 0.60
4380 0.70
10220 0.80
389820 0.90
3076220 0.95
97333820 0.99
973333820 1.00
