// The chain of the peers benchmark (scripts/bench/peers) in Simbody: N box links of 1 m and
// 1 kg (1 x 0.1 x 0.1 m), each on a ball joint at the end of the one before, the first at the
// origin, lying along +x at rest under gravity -9.81 z, integrated to t_end by Runge-Kutta-
// Merson at the given accuracy. Prints the far end of every link at t_end (x y z per line)
// and, on stderr, the CPU seconds of the integration and the steps taken.
// Usage: chain_simbody N ACCURACY [T_END]
#include <Simbody.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

using namespace SimTK;

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s N ACCURACY [T_END]\n", argv[0]);
    return 2;
  }
  int n = std::atoi(argv[1]);
  double acc = std::atof(argv[2]);
  double t_end = argc > 3 ? std::atof(argv[3]) : 1.0;
  MultibodySystem system;
  SimbodyMatterSubsystem matter(system);
  GeneralForceSubsystem forces(system);
  Force::Gravity gravity(forces, matter, Vec3(0, 0, -9.81));
  // a box 1 x 0.1 x 0.1 m of 1 kg about its centre, which lies 0.5 m along the link's x
  Body::Rigid body(MassProperties(1.0, Vec3(0.5, 0, 0),
                                  UnitInertia::brick(0.5, 0.05, 0.05).shiftFromCentroid(
                                      Vec3(-0.5, 0, 0))));
  MobilizedBody parent = matter.Ground();
  std::vector<MobilizedBody::Ball> links;
  for (int i = 0; i < n; i++) {
    Vec3 inboard = i == 0 ? Vec3(0) : Vec3(1, 0, 0);
    links.emplace_back(parent, Transform(inboard), body, Transform(Vec3(0)));
    parent = links.back();
  }
  system.realizeTopology();
  State state = system.getDefaultState();
  RungeKuttaMersonIntegrator integ(system);
  integ.setAccuracy(acc);
  TimeStepper ts(system, integ);
  ts.initialize(state);
  std::clock_t c0 = std::clock();
  ts.stepTo(t_end);
  double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
  const State &s = integ.getState();
  system.realize(s, Stage::Position);
  for (int i = 0; i < n; i++) {
    Vec3 p = links[i].findStationLocationInGround(s, Vec3(1, 0, 0));
    std::printf("%.17g %.17g %.17g\n", p[0], p[1], p[2]);
  }
  std::fprintf(stderr, "cpu %.6f steps %d\n", cpu, integ.getNumStepsTaken());
  return 0;
}
