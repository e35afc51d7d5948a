# Expected values from pROC for polaroc's smooth_roc (binormal, density), power_auc and
# power_auc_test.
#
#   python tests/proc/make_logs_infb.py     # writes infb_smooth.csv, infb_pilot.csv
#   Rscript tests/proc/make_fixtures_infb.R # writes fixtures_infb.json
#
# Run from the repository root. The tests read the JSON only, so CI needs no R.
suppressPackageStartupMessages({
  library(pROC)
  library(jsonlite)
})

here <- "tests/proc"
smooth_data <- read.csv(file.path(here, "infb_smooth.csv"))
pilot_data <- read.csv(file.path(here, "infb_pilot.csv"))

# --- binormal smooth: the curve from (0, 0) to (1, 1) and its AUC
smooth_cases <- list()
for (name in unique(smooth_data$dataset)) {
  d <- smooth_data[smooth_data$dataset == name, ]
  r <- roc(d$label, d$score, levels = c(0, 1), direction = "<", quiet = TRUE)
  for (n in c(512, 20)) {
    s <- smooth(r, method = "binormal", n = n)
    smooth_cases[[length(smooth_cases) + 1]] <- list(
      dataset = name, n = n,
      auc = as.numeric(s$auc),
      intercept = unname(coef(s$model)[1]), slope = unname(coef(s$model)[2]),
      fpr = rev(1 - s$specificities), tpr = rev(s$sensitivities)
    )
  }
}

# --- density smooth (bandwidth nrd0, Gaussian kernel: pROC's defaults)
density_cases <- list()
for (name in unique(smooth_data$dataset)) {
  d <- smooth_data[smooth_data$dataset == name, ]
  r <- roc(d$label, d$score, levels = c(0, 1), direction = "<", quiet = TRUE)
  for (n in c(512, 20, 1000)) {
    s <- smooth(r, method = "density", n = n)
    density_cases[[length(density_cases) + 1]] <- list(
      dataset = name, n = n, auc = as.numeric(s$auc),
      fpr = rev(1 - s$specificities), tpr = rev(s$sensitivities)
    )
  }
}

# --- one curve: power.roc.test(auc=, ncases=, ncontrols=, sig.level=, power=, kappa=)
tight_auc <- function(ncases, ncontrols, sig.level, power, alternative) {
  # the AUC pROC solves for, found by the same function with a tight tolerance
  a <- if (alternative == "two.sided") sig.level / 2 else sig.level
  uniroot(pROC:::power.roc.test.optimize.auc.function, interval = c(0.5, 1 - 1e-16),
          ncontrols = ncontrols, ncases = ncases, zalpha = qnorm(1 - a),
          zbeta = qnorm(power), tol = 1e-15)$root
}
one <- list()
add_one <- function(args, solve) {
  res <- do.call(power.roc.test, args)
  out <- list(given = args, solve = solve, auc = as.numeric(res$auc),
              n_cases = res$ncases, n_controls = res$ncontrols,
              alpha = res$sig.level, power = res$power)
  if (solve == "auc") {
    out$auc_tight <- tight_auc(res$ncases, res$ncontrols, args$sig.level, args$power,
                               if (is.null(args$alternative)) "two.sided" else args$alternative)
  }
  one[[length(one) + 1]] <<- out
}
add_one(list(auc = 0.8, ncases = 20, ncontrols = 20), "power")
add_one(list(auc = 0.7, ncases = 35, ncontrols = 70), "power")
add_one(list(auc = 0.65, ncases = 50, ncontrols = 30, sig.level = 0.01), "power")
add_one(list(auc = 0.75, ncases = 25, ncontrols = 25, alternative = "one.sided"), "power")
add_one(list(auc = 0.75, power = 0.9, kappa = 2), "n_cases")
add_one(list(auc = 0.9, power = 0.8), "n_cases")
add_one(list(auc = 0.6, power = 0.95, kappa = 0.5, sig.level = 0.01), "n_cases")
add_one(list(auc = 0.7, power = 0.8, alternative = "one.sided"), "n_cases")
add_one(list(ncases = 20, ncontrols = 30, power = 0.9, sig.level = 0.05), "auc")
add_one(list(ncases = 100, ncontrols = 100, power = 0.8, sig.level = 0.05), "auc")
add_one(list(ncases = 40, ncontrols = 20, power = 0.8, sig.level = 0.05,
             alternative = "one.sided"), "auc")
add_one(list(auc = 0.8, ncases = 20, ncontrols = 30, power = 0.9, sig.level = NULL), "alpha")
add_one(list(auc = 0.7, ncases = 60, ncontrols = 60, power = 0.8, sig.level = NULL,
             alternative = "one.sided"), "alpha")

# --- two curves from a pilot: power.roc.test(roc1, roc2, ...)
two <- list()
for (name in unique(pilot_data$dataset)) {
  d <- pilot_data[pilot_data$dataset == name, ]
  r1 <- roc(d$label, d$score_a, levels = c(0, 1), direction = "<", quiet = TRUE)
  r2 <- roc(d$label, d$score_b, levels = c(0, 1), direction = "<", quiet = TRUE)
  for (method in c("delong", "obuchowski")) {
    for (alternative in c("two.sided", "one.sided")) {
      p <- power.roc.test(r1, r2, method = method, alternative = alternative)
      n <- power.roc.test(r1, r2, power = 0.8, method = method, alternative = alternative)
      nk <- power.roc.test(r1, r2, power = 0.9, kappa = 2, method = method,
                           alternative = alternative)
      a <- power.roc.test(r1, r2, power = 0.8, sig.level = NULL, method = method,
                          alternative = alternative)
      two[[length(two) + 1]] <- list(
        dataset = name, method = method, alternative = alternative,
        auc_a = as.numeric(p$auc1), auc_b = as.numeric(p$auc2),
        pilot_cases = p$ncases, pilot_controls = p$ncontrols, power = p$power,
        n_cases_power_0.8 = n$ncases, n_controls_power_0.8 = n$ncontrols,
        n_cases_power_0.9_kappa_2 = nk$ncases, n_controls_power_0.9_kappa_2 = nk$ncontrols,
        alpha_power_0.8 = a$sig.level
      )
    }
  }
}

out <- list(
  r_version = R.version.string,
  proc_version = as.character(packageVersion("pROC")),
  generated_by = "tests/proc/make_fixtures_infb.R",
  smooth = smooth_cases,
  smooth_density = density_cases,
  power_one = one,
  power_two = two
)
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, null = "null", pretty = TRUE),
           file.path(here, "fixtures_infb.json"))
