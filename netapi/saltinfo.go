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
	jobs    map[string]any
	minions map[string]map[string]any
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
			si.minions = map[string]map[string]any{}
		}
		return ok
	case parts[1] == "job" && len(parts) > 5 && parts[3] == "ret":
		ok := si.retJob(parts[2], parts[5], data)
		if ok && str(data.Value("fun")) == "grains.items" {
			si.minion(parts[5])["grains"] = data.Value("return")
			return si.publishMinions()
		}
		return ok
	case parts[1] == "key":
		switch str(data.Value("act")) {
		case "delete":
			delete(si.minions, str(data.Value("id")))
		case "accept":
			si.minion(str(data.Value("id")))
		}
		return si.publishMinions()
	case parts[1] == "presence":
		return si.presence(ctx, data)
	}
	return true
}

func (si *saltInfo) minion(id string) map[string]any {
	m, ok := si.minions[id]
	if !ok {
		m = map[string]any{}
		si.minions[id] = m
	}
	return m
}

// newJob is process_new_job_event.
func (si *saltInfo) newJob(d *ordered.Map) bool {
	minions := map[string]any{}
	ids, _ := d.Value("minions").([]any)
	for _, id := range ids {
		minions[str(id)] = map[string]any{"success": false}
	}
	jid := str(d.Value("jid"))
	si.jobs[jid] = map[string]any{"jid": jid, "start_time": d.Value("_stamp"), "minions": minions,
		"fun": d.Value("fun"), "tgt": d.Value("tgt"), "tgt_type": d.Value("tgt_type"), "state": "running"}
	return si.publish("jobs", si.jobs)
}

// retJob is process_ret_job_event.
func (si *saltInfo) retJob(jid, id string, d *ordered.Map) bool {
	job, ok := si.jobs[jid].(map[string]any)
	if !ok {
		job = map[string]any{}
		si.jobs[jid] = job
	}
	mins, ok := job["minions"].(map[string]any)
	if !ok {
		mins = map[string]any{}
		job["minions"] = mins
	}
	mins[id] = map[string]any{"return": d.Value("return"), "retcode": d.Value("retcode"), "success": d.Value("success")}
	complete := true
	for _, m := range mins {
		if ok, _ := m.(map[string]any)["success"].(bool); !ok {
			complete = false
		}
	}
	if complete {
		job["state"] = "complete"
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
	for id := range si.minions {
		if !now[id] {
			delete(si.minions, id)
			changed = true
		}
	}
	var fresh []string
	for id := range now {
		if _, ok := si.minions[id]; !ok {
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

// publishMinions is SaltInfo.publish_minions.
func (si *saltInfo) publishMinions() bool {
	ids := make([]string, 0, len(si.minions))
	for id := range si.minions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	list := make([]any, 0, len(ids))
	for _, id := range ids {
		m := map[string]any{"id": id}
		for k, v := range si.minions[id] {
			m[k] = v
		}
		list = append(list, m)
	}
	return si.publish("minions", list)
}

func (si *saltInfo) publish(key string, v any) bool {
	js, err := py.JSON(map[string]any{key: v}, py.JSONOptions{Indent: -1})
	if err != nil {
		return true
	}
	return si.send(js)
}
