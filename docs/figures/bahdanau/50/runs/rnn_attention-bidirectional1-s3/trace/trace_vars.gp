# written by attnlab: the labels and numbers of the trace matrices beside it,
# for plots/attention.gp and plots/gates.gp (one stem tr_NAME per NAME.tsv)
tr_alignment_corner = 'tgt\src'
tr_alignment_cols = 'a	horse	paints	a	tree'
tr_alignment_rows = 'tamo	wa	arbo	pinto	ke	tamo'
tr_alignment_nx = 5
tr_alignment_ny = 6
$tr_alignment << EOD
0.0165866	0.983406	6.07157e-06	6.37161e-07	2.90081e-07
0.970146	0.0297418	0.000109769	1.73033e-06	6.17833e-07
0.000179881	0.000902553	0.00928497	0.0207958	0.968837
1.80483e-05	0.000228485	0.985444	0.00602797	0.00828166
0.000291229	0.0280136	0.0992156	0.00825185	0.864228
0.00740856	0.802084	0.0371192	0.029673	0.123716
EOD
