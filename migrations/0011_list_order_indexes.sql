DROP INDEX `deliveries_company_status`;--> statement-breakpoint
CREATE INDEX `deliveries_company` ON `deliveries` (`company_id`);--> statement-breakpoint
CREATE INDEX `deliveries_company_status_pdt` ON `deliveries` (`company_id`,`status`,`pdt_from`);--> statement-breakpoint
CREATE INDEX `addresses_company` ON `addresses` (`company_id`);--> statement-breakpoint
CREATE INDEX `tracking_company` ON `driver_tracking` (`company_id`);--> statement-breakpoint
CREATE INDEX `routes_company` ON `routes` (`company_id`);