# written by attnlab: the labels and numbers of the trace matrices beside it,
# for plots/attention.gp and plots/gates.gp (one stem tr_NAME per NAME.tsv)
tr_alignment_corner = 'tgt\src'
tr_alignment_cols = 'a	horse	paints	a	tree'
tr_alignment_rows = 'tamo	wa	arbo	pinto	ke	tamo'
tr_alignment_nx = 5
tr_alignment_ny = 6
$tr_alignment << EOD
0.0117061	0.988173	0.000106852	1.32334e-05	3.69094e-07
0.999989	1.04709e-05	1.73127e-07	4.52675e-09	2.51418e-08
0.000788088	0.000952994	0.0093285	0.0575161	0.931414
4.31192e-05	0.000103956	0.972351	0.0124224	0.0150795
0.00021282	0.169391	0.373504	0.107326	0.349567
0.00580833	0.977879	0.0156773	0.000421485	0.000213412
EOD
