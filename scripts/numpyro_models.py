"""The NumPyro models of the standard workloads (docs/performance.md): coin_toss, harmonic_d100,
linear_accel and hmm_k3_t2000, shared by scripts/numpyro_bench.py and scripts/methods_bench.py.
Import it after JAX_PLATFORMS is set (it imports JAX)."""
import jax, jax.numpy as jnp
from jax.scipy.special import logsumexp
import numpyro, numpyro.distributions as dist


def coin_toss(c1, c2):
    p1 = numpyro.sample("p1", dist.Uniform(0.0, 1.0))
    p2 = numpyro.sample("p2", dist.Uniform(0.0, 1.0))
    numpyro.sample("obs1", dist.Bernoulli(p1), obs=c1)
    numpyro.sample("obs2", dist.Bernoulli(p2), obs=c2)


def harmonic(k):
    numpyro.sample("q", dist.Normal(0.0, 1.0 / jnp.sqrt(k)))


def linear_accel(t, z, sigma):
    ts = t - t[0]
    h = numpyro.sample("h", dist.Uniform(70.0, 150.0))
    v0 = numpyro.sample("v0", dist.Uniform(20.0, 100.0))
    g = numpyro.sample("g", dist.Normal(-6.0, 2.0))
    numpyro.sample("z", dist.Normal(h + v0 * ts + g * ts**2, sigma), obs=z)


def hmm(words, K, V):
    trans = numpyro.sample("trans", dist.Dirichlet(jnp.ones((K, K))))
    emit = numpyro.sample("emit", dist.Dirichlet(jnp.full((K, V), 0.1)))
    lt, le = jnp.log(trans), jnp.log(emit)

    def step(alpha, w):
        return logsumexp(alpha[:, None] + lt, axis=0) + le[:, w], None

    alpha, _ = jax.lax.scan(step, le[:, words[0]], words[1:])
    numpyro.factor("forward", logsumexp(alpha))
