# written by attnlab: the labels and numbers of the trace matrices beside it,
# for plots/attention.gp and plots/gates.gp (one stem tr_NAME per NAME.tsv)
tr_alignment_corner = 'tgt\src'
tr_alignment_cols = 'a	horse	paints	a	tree'
tr_alignment_rows = 'tamo	wa	arbo	pinto	ke	arbo'
tr_alignment_nx = 5
tr_alignment_ny = 6
$tr_alignment << EOD
0.000966854	0.998829	0.000203315	5.88313e-07	5.14889e-07
0.892271	0.107254	0.000468779	3.68773e-06	1.72405e-06
0.000145223	0.00274136	0.00587856	0.00727422	0.983961
0.000583724	0.00435143	0.985453	0.00820075	0.00141082
0.000872779	0.00532171	0.0621588	0.000758417	0.930888
0.0282386	0.285153	0.348194	0.0334266	0.304988
EOD
