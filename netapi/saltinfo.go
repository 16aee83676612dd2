package netapi

import (
	"context"
	"slices"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/master"
)

// saltInfo is rest_cherrypy's event_processor.SaltInfo: a running view
// of jobs and minions built from the events, each change sent as
// {"jobs": {...}} or {"minions": [...]}.
type saltInfo struct {
	s       *Server
	token   string
	send    func(string) bool
	jobs    *ordered.Map // jid -> job
	minions *ordered.Map // id -> {grains}
}

func newSaltInfo(s *Server, token string, send func(string) bool) *saltInfo {
	return &saltInfo{s: s, token: token, send: send, jobs: ordered.New(), minions: ordered.New()}
}

// process is SaltInfo.process for one event; false when the client is
// gone.
func (si *saltInfo) process(ctx context.Context, ev *hubEvent) bool {
	parts := strings.Split(ev.Tag, "/")
	if len(parts) < 2 {
		return true
	}
	data := ev.Data
	switch {
	case parts[1] == "job" && len(parts) > 3 && parts[3] == "new":
		ok := si.newJob(data)
		if str(data.Value("fun")) == "grains.items" {
			si.minions = ordered.New()
		}
		return ok
	case parts[1] == "job" && len(parts) > 5 && parts[3] == "ret":
		ok := si.retJob(parts[2], parts[5], data)
		if ok && str(data.Value("fun")) == "grains.items" {
			si.minion(parts[5]).Set("grains", data.Value("return"))
			return si.publishMinions()
		}
		return ok
	case parts[1] == "key":
		switch str(data.Value("act")) {
		case "delete":
			si.minions.Delete(str(data.Value("id")))
		case "accept":
			si.minion(str(data.Value("id")))
		}
		return si.publishMinions()
	case parts[1] == "presence":
		return si.presence(ctx, data)
	}
	return true
}

func (si *saltInfo) minion(id string) *ordered.Map {
	m, ok := si.minions.Value(id).(*ordered.Map)
	if !ok {
		m = ordered.New()
		si.minions.Set(id, m)
	}
	return m
}

// newJob is process_new_job_event.
func (si *saltInfo) newJob(d *ordered.Map) bool {
	minions := ordered.New()
	ids, _ := d.Value("minions").([]any)
	for _, id := range ids {
		minions.Set(str(id), ordered.FromPairs("success", false))
	}
	jid := str(d.Value("jid"))
	si.jobs.Set(jid, ordered.FromPairs("jid", jid, "start_time", d.Value("_stamp"), "minions", minions,
		"fun", d.Value("fun"), "tgt", d.Value("tgt"), "tgt_type", d.Value("tgt_type"), "state", "running"))
	return si.publish("jobs", si.jobs)
}

// retJob is process_ret_job_event.
func (si *saltInfo) retJob(jid, id string, d *ordered.Map) bool {
	job, ok := si.jobs.Value(jid).(*ordered.Map)
	if !ok {
		job = ordered.New()
		si.jobs.Set(jid, job)
	}
	mins, ok := job.Value("minions").(*ordered.Map)
	if !ok {
		mins = ordered.New()
		job.Set("minions", mins)
	}
	m, ok := mins.Value(id).(*ordered.Map)
	if !ok {
		m = ordered.New()
		mins.Set(id, m)
	}
	m.Set("return", d.Value("return"))
	m.Set("retcode", d.Value("retcode"))
	m.Set("success", d.Value("success"))
	complete := true
	mins.Range(func(_, v any) bool {
		mm, _ := v.(*ordered.Map)
		if ok, _ := mm.Value("success").(bool); !ok {
			complete = false
		}
		return true
	})
	if complete {
		job.Set("state", "complete")
	}
	return si.publish("jobs", si.jobs)
}

// presence is process_presence_events: minions gone are dropped, new
// ones are asked for their grains (a local_async grains.items with the
// stream's token), and the list is sent when it changed.
func (si *saltInfo) presence(ctx context.Context, d *ordered.Map) bool {
	present, _ := d.Value("present").([]any)
	now := map[string]bool{}
	for _, id := range present {
		now[str(id)] = true
	}
	changed := false
	for _, id := range si.minions.StringKeys() {
		if !now[id] {
			si.minions.Delete(id)
			changed = true
		}
	}
	var fresh []string
	for id := range now {
		if !si.minions.Has(id) {
			fresh = append(fresh, id)
		}
	}
	if len(fresh) > 0 {
		changed = true
		slices.Sort(fresh)
		req := master.PublishRequest{Tgt: strings.Join(fresh, ","), TgtType: "list", Fun: "grains.items",
			Auth: master.Creds{Token: si.token}}
		if _, err := si.s.localAsync(ctx, req); err != nil {
			si.s.log.Warn("websocket: grains of new minions", "err", err)
		}
	}
	if changed {
		return si.publishMinions()
	}
	return true
}

// publishMinions is SaltInfo.publish_minions: a list of each minion's
// data with its id.
func (si *saltInfo) publishMinions() bool {
	list := []any{}
	si.minions.Range(func(k, v any) bool {
		m := v.(*ordered.Map).Copy()
		m.Set("id", k)
		list = append(list, m)
		return true
	})
	return si.publish("minions", list)
}

func (si *saltInfo) publish(key string, v any) bool {
	js, err := py.JSON(ordered.FromPairs(key, v), py.JSONOptions{Indent: -1})
	if err != nil {
		return true
	}
	return si.send(js)
}
