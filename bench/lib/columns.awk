# Rows of numbers, one a line after a label: median(COL) is the median of column COL over all
# rows read, for the END block of the program this is put before (bench/execs, bench/merge).
function median(col,   j, k, v, m) {
    for (k = 1; k <= NR; k++) v[k] = cell[k, col]
    # insertion sort: a handful of rows
    for (k = 2; k <= NR; k++) {
        m = v[k]
        for (j = k - 1; j >= 1 && v[j] > m; j--) v[j + 1] = v[j]
        v[j + 1] = m
    }
    return NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
}
{ for (k = 2; k <= NF; k++) cell[NR, k] = $k }
