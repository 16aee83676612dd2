package client

import "github.com/brinesalt/brine/master"

// withAuth gives p the credentials of the job it serves: find_job goes
// out as the job's caller, as LocalClient passes its **kwargs (token or
// eauth credentials) on to gather_job_info.
func withAuth(p, from master.PublishRequest) master.PublishRequest {
	p.Auth = from.Auth
	return p
}
