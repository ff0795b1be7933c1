/* physics.c - a physics step in floating point: a chain of particles joined by springs, pulled by
 * gravity, damped, integrated with semi-implicit Euler and bounced off the ground, in double
 * precision with a Newton square root (no libm, so the freestanding PowerPC build needs nothing
 * else). Input: the number of steps in hundreds. */
#include "bench.h"

#define PARTICLES 64

struct particle {
	double x, y, vx, vy;
};

static struct particle p[PARTICLES];

/* sqrt by Newton's method from a power-of-two guess: the same operations on every guest. */
static double newton_sqrt(double v)
{
	if (v <= 0.0)
		return 0.0;
	double g = v > 1.0 ? v * 0.5 : 1.0;
	for (int i = 0; i < 24; i++)
		g = 0.5 * (g + v / g);
	return g;
}

static void setup(void)
{
	for (int i = 0; i < PARTICLES; i++) {
		p[i].x = i * 0.5;
		p[i].y = 10.0 + (bench_rand() & 0xff) / 256.0;
		p[i].vx = 0.0;
		p[i].vy = 0.0;
	}
}

static void step(double dt)
{
	const double rest = 0.5, stiffness = 80.0, damping = 0.995, gravity = -9.81;
	double fx[PARTICLES], fy[PARTICLES];
	for (int i = 0; i < PARTICLES; i++) {
		fx[i] = 0.0;
		fy[i] = gravity;
	}
	for (int i = 0; i + 1 < PARTICLES; i++) {
		double dx = p[i + 1].x - p[i].x, dy = p[i + 1].y - p[i].y;
		double len = newton_sqrt(dx * dx + dy * dy);
		double f = len > 1e-9 ? stiffness * (len - rest) / len : 0.0;
		fx[i] += f * dx;
		fy[i] += f * dy;
		fx[i + 1] -= f * dx;
		fy[i + 1] -= f * dy;
	}
	for (int i = 0; i < PARTICLES; i++) {
		p[i].vx = (p[i].vx + fx[i] * dt) * damping;
		p[i].vy = (p[i].vy + fy[i] * dt) * damping;
		p[i].x += p[i].vx * dt;
		p[i].y += p[i].vy * dt;
		if (p[i].y < 0.0) {
			p[i].y = -p[i].y * 0.5;
			p[i].vy = -p[i].vy * 0.7;
		}
	}
}

/* A value's bits folded into the checksum (as integers, so no printf of floats is needed). */
static u32 mix_double(u32 sum, double d)
{
	union {
		double d;
		u64 u;
	} bits = { d };
	return bench_mix(bench_mix(sum, (u32)bits.u), (u32)(bits.u >> 32));
}

int main(void)
{
	u32 hundreds = bench_scale(1);
	setup();
	u32 sum = 0x811c9dc5u;
	for (u32 s = 0; s < hundreds * 100; s++) {
		step(0.002);
		if (s % 100 == 99)
			sum = mix_double(sum, p[PARTICLES / 2].y);
	}
	double energy = 0.0;
	for (int i = 0; i < PARTICLES; i++)
		energy += 0.5 * (p[i].vx * p[i].vx + p[i].vy * p[i].vy) + 9.81 * p[i].y;
	bench_line("energy-milli", (u32)(s32)(energy * 1000.0));
	bench_line("checksum", mix_double(sum, energy));
	return 0;
}
