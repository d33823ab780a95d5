# Written by `pegasos run`; plot with: gnuplot curves.gp
if (!exists("prefix")) prefix = ""
terms = " " . GPVAL_TERMINALS . " "
if (strstrt(terms, " pngcairo ") > 0) {
  set terminal pngcairo size 900,600 noenhanced font ",10"; ext = ".png"
} else {
  if (strstrt(terms, " png ") > 0) { set terminal png size 900,600 noenhanced; ext = ".png" } else { set terminal svg size 900,600 noenhanced; ext = ".svg" }
}
set grid
set key outside right top
unset key
set size square
set xrange [0:1]
set yrange [0:1]
set output prefix . "roc" . ext
set title "ROC, best model on the test set"
set xlabel "false positive rate"
set ylabel "true positive rate"
plot 'curves.dat' using 1:2 with lines lw 2, x with lines dashtype 2
set output prefix . "precision_recall" . ext
set title "precision-recall, best model on the test set"
set xlabel "recall"
set ylabel "precision"
plot 'curves.dat' using 2:3 with lines lw 2
