"""A stand-in for ``records.Record`` with the parts chapter 3's analyses read (for tests
that need a k-hop sweep without training one)."""


class FakeRecord:
    """The parts of ``records.Record`` that ``khop_analysis`` reads."""

    def __init__(self, arms):            # arms: name -> (info, {k: [acc per seed]})
        self._arms = arms
        first = next(iter(arms.values()))[1]
        self.runs = [{"final": {f"accuracy_k{k}": 0.0 for k in first}}]
        self.seeds = list(range(len(next(iter(first.values())))))
        self.name = "fake"

    @property
    def arms(self):
        return list(self._arms)

    def arm(self, name):
        return {"info": self._arms[name][0]}

    def final(self, metric):
        k = int(metric.removeprefix("accuracy_k"))
        return {name: acc[k] for name, (_, acc) in self._arms.items()}


def info(L, d, lr, *families):
    return {"n_layer": L, "d_model": d, "lr": lr, "families": list(families)}
