# written by attnlab: the labels and numbers of the trace matrices beside it,
# for plots/attention.gp and plots/gates.gp (one stem tr_NAME per NAME.tsv)
tr_alignment_corner = 'tgt\src'
tr_alignment_cols = 'a	horse	paints	a	tree'
tr_alignment_rows = 'tamo	wa	arbo	pinto	ke	tamo'
tr_alignment_nx = 5
tr_alignment_ny = 6
$tr_alignment << EOD
0.049287	0.950501	0.000107854	5.86716e-06	9.80428e-05
0.965281	0.0279233	0.00394325	0.00272067	0.00013182
0.000208005	0.00118515	0.0298158	0.0392539	0.929537
3.28777e-05	0.000378318	0.990786	0.00781333	0.000989392
5.2218e-05	0.13144	0.0029722	0.0032652	0.862271
0.0648002	0.829787	0.0203904	0.00107377	0.0839489
EOD
