"""Running async testbenches on Amaranth's simulator, for the tests of single blocks: one
clock on the design's ``sync`` domain, the testbenches added in order, run to the end."""

from amaranth.sim import Simulator

__all__ = ["simulate"]


def simulate(design, *testbenches, background=(), period=1e-8):
    """Run ``testbenches`` (``async def bench(ctx)``) on ``design`` until each has returned;
    the ``background`` ones run beside them and do not keep the simulation going."""
    sim = Simulator(design)
    sim.add_clock(period)
    for bench in testbenches:
        sim.add_testbench(bench)
    for bench in background:
        sim.add_testbench(bench, background=True)
    sim.run()
