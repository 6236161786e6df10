package agent_test

import (
	"testing"
	"time"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/event"
)

// BenchmarkActLogin runs the 4-step login task (rule planner) on a fresh
// simulated phone per iteration, through adbd and the Android driver, and
// reports the agent's cost per step: wall time and settled observations (each two or more UI dumps).
func BenchmarkActLogin(b *testing.B) {
	rt, _ := agent.New(agent.Config{})
	tk := taskNamed(b, "login")
	steps, observed := 0, 0
	var spent time.Duration
	for b.Loop() {
		b.StopTimer()
		p := startPhone(b, noPopupSeed)
		p.launch(b, tk.app)
		// Warm the phone's first dump (a one-time cost of the simulator).
		if _, err := p.drv.Source(ctxT(b, 10*time.Second)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		res, err := rt.Act(ctxT(b, 60*time.Second), agent.Task{Goal: tk.goal, Driver: p.drv})
		spent += time.Since(start)
		if err != nil || res.Status != agent.Done {
			b.Fatalf("%v %v", err, res)
		}
		steps += len(res.Steps)
		for _, e := range res.Events {
			if e.ActionType == event.EvObserved {
				observed++
			}
		}
	}
	b.ReportMetric(float64(spent.Milliseconds())/float64(steps), "ms/step")
	b.ReportMetric(float64(observed)/float64(steps), "settles/step")
}
