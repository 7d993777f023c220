# Web-search flow sizes: the distribution measured in a production web-search cluster,
# Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010 (Figure 4), in the tabulated form
# that later datacenter transport studies use (e.g. pFabric, SIGCOMM 2013): sizes are in 1460-byte
# packets there; here in bytes. Columns: flow size (bytes), cumulative probability.
# Mean about 1.6 MB; between the points the size is interpolated linearly.
8760 0.15
18980 0.20
27740 0.30
48180 0.40
77380 0.53
194180 0.60
973820 0.70
1946180 0.80
4865180 0.90
9733820 0.97
29200000 1.00
