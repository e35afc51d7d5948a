"""Build polaroc's bundled example log from a real data set shipped with scikit-learn.

The Wisconsin diagnostic breast cancer data (569 samples, 30 features; the two-class
row of Hand & Till's 2001 Table 1) is split by stratified 10-fold cross-validation
(Bradley 1997: 10 folds, class proportions kept) and six classifiers of different
families are fitted on each training part. Every test sample gets one row per class:
the classifier's probability for that class. The result is the long log polaroc reads:

    model, fold, sample, class, score, label

Run from the repository root:  python scripts/make_demo_log.py
It rewrites polaroc/data/demo_log.parquet deterministically.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from sklearn.datasets import load_breast_cancer
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

OUT = Path(__file__).resolve().parents[1] / "polaroc" / "data" / "demo_log.parquet"
SEED = 1997


def classifiers() -> dict[str, object]:
    scaled = lambda model: make_pipeline(StandardScaler(), model)  # noqa: E731
    return {
        "logistic": scaled(LogisticRegression(max_iter=1000)),
        "lda": LinearDiscriminantAnalysis(),
        "naive_bayes": GaussianNB(),
        "knn9": scaled(KNeighborsClassifier(n_neighbors=9)),
        "tree": DecisionTreeClassifier(max_depth=4, random_state=SEED),
        "forest": RandomForestClassifier(n_estimators=200, random_state=SEED),
    }


def build_log() -> pl.DataFrame:
    data = load_breast_cancer()
    x, y = data.data, data.target
    names = np.asarray(data.target_names)  # ['malignant', 'benign']
    folds = StratifiedKFold(n_splits=10, shuffle=True, random_state=SEED)
    parts = []
    for fold, (train, test) in enumerate(folds.split(x, y)):
        for model, clf in classifiers().items():
            proba = clf.fit(x[train], y[train]).predict_proba(x[test])
            for k, cls in enumerate(clf.classes_):
                parts.append(
                    pl.DataFrame(
                        {
                            "model": model,
                            "fold": fold,
                            "sample": test,
                            "class": names[cls],
                            "score": proba[:, k],
                            "label": names[y[test]],
                        }
                    )
                )
    return pl.concat(parts).with_columns(
        pl.col("fold").cast(pl.Int8),
        pl.col("sample").cast(pl.Int32),
        pl.col("class", "label").cast(pl.Enum(["benign", "malignant"])),
    )


def main() -> None:
    log = build_log().sort("model", "fold", "sample", "class")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    log.write_parquet(OUT, compression="zstd", statistics=False)
    print(f"wrote {OUT.name}: {log.height} rows, {OUT.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
