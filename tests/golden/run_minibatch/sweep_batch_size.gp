# Written by `pegasos run`; plot with: gnuplot sweep_batch_size.gp
if (!exists("prefix")) prefix = ""
terms = " " . GPVAL_TERMINALS . " "
if (strstrt(terms, " pngcairo ") > 0) {
  set terminal pngcairo size 900,600 noenhanced font ",10"; ext = ".png"
} else {
  if (strstrt(terms, " png ") > 0) { set terminal png size 900,600 noenhanced; ext = ".png" } else { set terminal svg size 900,600 noenhanced; ext = ".svg" }
}
set grid
set key outside right top
set xlabel "batch_size"
set logscale x 10
set xtics 0.1, 10 format "%g"
set mxtics 10
set xrange [0.6666666667:384]
set output prefix . "sweep_batch_size_objective" . ext
set title "objective vs batch_size (test runs; mean ± std over repeats)"
set ylabel "objective"
plot "sweep_batch_size.dat" index 0 using 1:2:3 with yerrorlines title "batch_size"
set output prefix . "sweep_batch_size_balanced_accuracy" . ext
set title "balanced_accuracy vs batch_size (test runs; mean ± std over repeats)"
set ylabel "balanced_accuracy"
plot "sweep_batch_size.dat" index 0 using 1:4:5 with yerrorlines title "batch_size"
