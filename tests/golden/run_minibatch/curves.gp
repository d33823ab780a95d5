# Written by `pegasos run`; plot with: gnuplot curves.gp
if (!exists("prefix")) prefix = ""
terms = " " . GPVAL_TERMINALS . " "
if (strstrt(terms, " pngcairo ") > 0) {
  set terminal pngcairo size 800,700 noenhanced font ",10"; ext = ".png"
} else {
  if (strstrt(terms, " png ") > 0) { set terminal png size 800,700 noenhanced; ext = ".png" } else { set terminal svg size 800,700 noenhanced; ext = ".svg" }
}
set grid
set key outside right top
set key inside bottom right box opaque
set yrange [0:1.02]
set output prefix . "roc" . ext
set title "ROC, best model on the test set (log FPR axis)"
set logscale x 10
set xtics 0.001, 10 format "%g"
set mxtics 10
set xrange [0.001:1]
set xlabel "false positive rate"
set ylabel "true positive rate (recall)"
plot 'curves.dat' index 0 using ($1 > 0 ? $1 : NaN):2 with steps lw 2 title "ROC", x with lines dashtype 2 title "chance", \
     '' index 1 using 1:2 with points pt 7 ps 2 title "score > 0: FPR 0.0787, recall 0.727, precision 0.533"
unset logscale x
set xtics autofreq format "% h"
set mxtics default
set xrange [0:1]
set output prefix . "precision_recall" . ext
set title "precision-recall, best model on the test set"
set xlabel "recall"
set ylabel "precision"
set key inside bottom left box opaque
plot 'curves.dat' index 0 using 2:3 with lines lw 2 title "precision-recall", \
     '' index 1 using 2:3 with points pt 7 ps 2 title "score > 0: FPR 0.0787, recall 0.727, precision 0.533"
