package dbtest

import (
	"database/sql"

	"github.com/jackc/pgx/v5/stdlib"
)

func openPG(s *Server) (*sql.DB, error) { return stdlib.OpenDB(*s.PGConfig()), nil }
