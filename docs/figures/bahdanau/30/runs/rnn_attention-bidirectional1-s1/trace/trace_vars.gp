# written by attnlab: the labels and numbers of the trace matrices beside it,
# for plots/attention.gp and plots/gates.gp (one stem tr_NAME per NAME.tsv)
tr_alignment_corner = 'tgt\src'
tr_alignment_cols = 'a	horse	paints	a	tree'
tr_alignment_rows = 'tamo	wa	arbo	pinto	ke	tamo'
tr_alignment_nx = 5
tr_alignment_ny = 6
$tr_alignment << EOD
0.00435989	0.995624	1.54574e-05	7.02547e-07	1.57918e-07
0.970442	0.0266998	0.00278151	1.23672e-05	6.43955e-05
8.73373e-05	0.000687474	0.00667875	0.0106803	0.981866
1.49988e-05	8.36572e-05	0.987679	0.0113029	0.000919737
4.52515e-05	0.616278	0.112765	0.0043965	0.266515
0.0151416	0.960588	0.0235536	0.000227099	0.000489892
EOD
