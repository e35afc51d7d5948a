# Expected values from pROC for polaroc's inference (auc_ci, delong_test, bootstrap_test,
# venkatraman_test, roc_ci, coords_ci). Run from the repository root:
#   Rscript tests/proc/make_fixtures_infa.R
# It reads tests/proc/infa_*.csv (written by make_logs_infa.py) and writes
# tests/proc/fixtures_infa.json with the R and pROC versions. Every ROC is built with
# levels = c(0, 1) and direction = "<" (a higher score means positive), as polaroc.
suppressMessages({library(pROC); library(jsonlite)})
set.seed(20261124)
here <- "tests/proc"
read <- function(name) read.csv(file.path(here, name))
curve <- function(d) roc(d$label, d$score, levels = c(0, 1), direction = "<", quiet = TRUE)
both <- function(d) list(a = curve(d[d$model == "a", ]), b = curve(d[d$model == "b", ]))
B <- 2000
SP <- c(0.05, 0.25, 0.5, 0.75, 0.95)
SE <- c(0.1, 0.3, 0.5, 0.7, 0.9)
THR <- c(-0.55, 0.05, 0.45, 1.05)

htest <- function(t) list(
  statistic = unname(t$statistic),
  df = if (is.null(t$parameter)) NULL else unname(t$parameter),
  p_value = t$p.value,
  conf_int = if (is.null(t$conf.int)) NULL else as.numeric(t$conf.int)
)

one_log <- function(name, paired) {
  d <- read(name)
  r <- both(d)
  out <- list(file = name, paired = paired)
  out$auc <- list(a = as.numeric(r$a$auc), b = as.numeric(r$b$auc))
  out$ci_auc <- lapply(r, function(x) list(
    level_95 = as.numeric(ci.auc(x, method = "delong")),
    level_90 = as.numeric(ci.auc(x, conf.level = 0.9, method = "delong")),
    var = as.numeric(var(x, method = "delong"))
  ))
  out$delong <- lapply(c(two.sided = "two.sided", greater = "greater", less = "less"),
    function(alt) htest(roc.test(r$a, r$b, method = "delong", paired = paired,
                                 alternative = alt)))
  out$delong_90 <- htest(roc.test(r$a, r$b, method = "delong", paired = paired,
                                  conf.level = 0.9))
  out$bootstrap <- lapply(c(two.sided = "two.sided", greater = "greater"), function(alt)
    htest(roc.test(r$a, r$b, method = "bootstrap", paired = paired, boot.n = B,
                   alternative = alt)))
  out$venkatraman <- htest(roc.test(r$a, r$b, method = "venkatraman", paired = paired,
                                    boot.n = B))
  out$ci_se <- lapply(r, function(x) {
    ci <- ci.se(x, specificities = SP, boot.n = B)
    list(specificity = SP, low = unname(ci[, 1]), median = unname(ci[, 2]), high = unname(ci[, 3]))
  })
  out$ci_sp <- lapply(r, function(x) {
    ci <- ci.sp(x, sensitivities = SE, boot.n = B)
    list(sensitivity = SE, low = unname(ci[, 1]), median = unname(ci[, 2]), high = unname(ci[, 3]))
  })
  out$ci_thresholds <- lapply(r, function(x) {
    ci <- ci.thresholds(x, thresholds = THR, boot.n = B)
    list(threshold = THR,
         specificity = list(low = unname(ci$specificity[, 1]), median = unname(ci$specificity[, 2]),
                            high = unname(ci$specificity[, 3])),
         sensitivity = list(low = unname(ci$sensitivity[, 1]), median = unname(ci$sensitivity[, 2]),
                            high = unname(ci$sensitivity[, 3])))
  })
  out
}

fixtures <- list(
  r_version = R.version.string,
  proc_version = as.character(packageVersion("pROC")),
  n_boot = B,
  logs = list(
    paired = one_log("infa_paired.csv", TRUE),
    ties = one_log("infa_ties.csv", TRUE),
    unpaired = one_log("infa_unpaired.csv", FALSE)
  )
)
write_json(fixtures, file.path(here, "fixtures_infa.json"), digits = NA, auto_unbox = TRUE,
           pretty = TRUE, null = "null")
