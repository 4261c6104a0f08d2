# written by attnlab: the labels and numbers of the trace matrices beside it,
# for plots/attention.gp and plots/gates.gp (one stem tr_NAME per NAME.tsv)
tr_alignment_corner = 'tgt\src'
tr_alignment_cols = 'a	horse	paints	a	tree'
tr_alignment_rows = 'tamo	wa	arbo	pinto	ke	tamo'
tr_alignment_nx = 5
tr_alignment_ny = 6
$tr_alignment << EOD
0.00155424	0.998414	3.13973e-05	1.16437e-08	2.43044e-07
0.91224	0.0871247	0.000522459	1.01569e-05	0.00010305
0.000237692	0.00228805	0.0124823	0.000563152	0.984429
0.000117125	0.00132852	0.995553	0.00221505	0.000786068
7.72739e-05	0.242228	0.0107096	0.00155939	0.745426
0.000725231	0.9979	0.000662969	8.65648e-06	0.000702914
EOD
