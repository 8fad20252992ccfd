package agent

import (
	"context"
)

// SyncLoop runs the agent's syncs until ctx is done: a sync at start, then one on every tick of SyncPeriod and on
// every wake-up. Wake-ups that arrive during a sync coalesce into one more sync. It returns nil, once the
// ladders that went on in the background (PDB fallback waits) have ended.
func (a *Agent) SyncLoop(ctx context.Context) error {
	a.init()
	defer a.bg.Wait() // ladders that went on in the background: their waits end with ctx
	t := a.Clock.NewTicker(a.Settings.SyncPeriod)
	defer t.Stop()
	a.sync(ctx, TriggerStart)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			a.sync(ctx, TriggerPeriodic)
		case <-a.Wake:
			a.sync(ctx, TriggerNotify)
		case kc := <-a.KubeletUpdates:
			a.KubeletConfig = kc
		}
	}
}
